import { describe, expect, it } from 'vitest';
import { columnOptions } from './tables';

describe('columnOptions', () => {
  it('reads type, length, flags and default as SQL writes them', () => {
    expect(columnOptions('id', 'varchar(40) primary')).toEqual({
      name: 'id',
      type: 'varchar',
      length: '40',
      isPrimary: true,
    });
    expect(columnOptions('ended_at', 'bigint null')).toEqual({ name: 'ended_at', type: 'bigint', isNullable: true });
    expect(columnOptions('uri', 'varchar unique not null')).toEqual({
      name: 'uri',
      type: 'varchar',
      isUnique: true,
      isNullable: false,
    });
    expect(columnOptions('metadata', "text default '{}'")).toEqual({ name: 'metadata', type: 'text', default: "'{}'" });
    expect(columnOptions('promoted', 'boolean default false')).toEqual({
      name: 'promoted',
      type: 'boolean',
      default: false,
    });
  });

  it('refuses a spec it cannot read, naming the column', () => {
    expect(() => columnOptions('x', 'varchar(40) nullable')).toThrow(
      /Column 'x': cannot read 'varchar\(40\) nullable'/,
    );
    expect(() => columnOptions('y', 'var char')).toThrow(/Column 'y'/);
  });
});
