import { describe, expect, it } from 'vitest';
import { hasSearchTerms, toFts5Query, toPgWebsearch } from './search-query';

describe('toFts5Query', () => {
  it('requires every word, each quoted as a token', () => {
    expect(toFts5Query('solar capacity')).toBe('("solar" AND "capacity")');
  });

  it('turns punctuated words and quoted text into phrases of adjacent tokens', () => {
    expect(toFts5Query('solar_pv.csv')).toBe('("solar pv csv")');
    expect(toFts5Query('"wind power" germany')).toBe('("wind power" AND "germany")');
    expect(toFts5Query('"unclosed phrase')).toBe('("unclosed phrase")');
  });

  it('splits alternatives on or and appends exclusions with NOT', () => {
    expect(toFts5Query('solar or wind -offshore')).toBe('("solar") OR ("wind" NOT "offshore")');
    expect(toFts5Query('or solar OR or')).toBe('("solar")');
  });

  it('keeps FTS5 syntax characters and operators out of the expression', () => {
    expect(toFts5Query('a* AND b: NEAR(c) ^d "e')).toBe('("a" AND "AND" AND "b" AND "NEAR c" AND "d" AND "e")');
    expect(toFts5Query('Zürich 2030')).toBe('("Zürich" AND "2030")');
  });

  it('is empty when nothing is left to search for', () => {
    for (const text of ['', '   ', '*** ::', '-solar', 'or', '""']) {
      expect(toFts5Query(text), text).toBe('');
      expect(hasSearchTerms(text), text).toBe(false);
    }
    expect(hasSearchTerms('solar')).toBe(true);
  });
});

describe('toPgWebsearch', () => {
  it('turns ASCII punctuation into spaces but keeps quotes and leading minus signs', () => {
    expect(toPgWebsearch('solar_pv.csv')).toBe('solar pv csv');
    expect(toPgWebsearch('"day-ahead prices" -offshore')).toBe('"day ahead prices" -offshore');
    expect(toPgWebsearch("a&b|c!d:*(e)'f'")).toBe('a b c d   e  f ');
    expect(toPgWebsearch('solar\u0000x\ty')).toBe('solar x y');
  });
});
