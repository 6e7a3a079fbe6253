import { describe, expect, it } from 'vitest';
import { ArtifactLinks } from './artifact-links';

describe('ArtifactLinks', () => {
  const links = new ArtifactLinks('k'.repeat(32), 60_000, () => 'https://stoa.example.com/');
  const now = 1_800_000_000_000;
  const tokenOf = (url: string) => url.split('/')[5] as string;

  it('builds /artifacts/{session}/{expiry.mac}/{name} under the public URL', () => {
    const { url, expires_at } = links.create('s-1', 'alice@t', 'dir/a b.csv', now);
    expect(url).toMatch(
      /^https:\/\/stoa\.example\.com\/artifacts\/s-1\/[0-9a-z]+\.[A-Za-z0-9_-]{32}\/dir\/a%20b\.csv$/,
    );
    expect(Date.parse(expires_at)).toBe(now + 60_000);
  });

  it('verifies only the exact session, owner, name and unexpired time', () => {
    const token = tokenOf(links.create('s-1', 'alice@t', 'a.csv', now).url);
    expect(links.verify('s-1', 'alice@t', 'a.csv', token, now + 59_000)).toBe(true);
    expect(links.verify('s-1', 'alice@t', 'a.csv', token, now + 60_001)).toBe(false); // expired
    expect(links.verify('s-2', 'alice@t', 'a.csv', token, now)).toBe(false);
    expect(links.verify('s-1', 'bob@t', 'a.csv', token, now)).toBe(false);
    expect(links.verify('s-1', 'alice@t', 'b.csv', token, now)).toBe(false);
    const [exp, mac] = token.split('.') as [string, string];
    expect(links.verify('s-1', 'alice@t', 'a.csv', `${(parseInt(exp, 36) + 100).toString(36)}.${mac}`, now)).toBe(
      false,
    );
    expect(links.verify('s-1', 'alice@t', 'a.csv', `${exp}.${mac.slice(0, 8)}`, now)).toBe(false); // short MACs never verify
    expect(links.verify('s-1', 'alice@t', 'a.csv', 'garbage', now)).toBe(false);
  });

  it('links from another key (another deployment) do not verify', () => {
    const other = new ArtifactLinks('z'.repeat(32), 60_000, () => 'http://x');
    const token = tokenOf(other.create('s-1', 'alice@t', 'a.csv', now).url);
    expect(other.verify('s-1', 'alice@t', 'a.csv', token, now)).toBe(true);
    expect(links.verify('s-1', 'alice@t', 'a.csv', token, now)).toBe(false);
  });
});
