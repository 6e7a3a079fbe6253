import { z } from 'zod';

declare module 'zod' {
  interface GlobalMeta {
    /**
     * Environment variable(s) that set this config key (`field.meta({ env: 'PORT' })`). With several names, a
     * later one that is set wins over an earlier one.
     */
    env?: string | readonly string[];
  }
}

/** Environment variable → dotted config path (e.g. `PORT` → `server.port`). */
export type EnvMap = Readonly<Record<string, string>>;

/**
 * The env overrides a config schema declares: every field's `meta({ env })`, at its dotted path. The names live
 * next to the key they set, so a sub-schema composed into several apps brings its variables along.
 * A name declared at two paths of one schema is a programming error and throws.
 */
export function envMapOf(schema: z.core.$ZodType): EnvMap {
  const map: Record<string, string> = {};
  walk(schema, [], (name, path) => {
    const known = map[name];
    if (known !== undefined && known !== path) {
      throw new Error(`env variable ${name} is declared for both ${known} and ${path}; give one of them another name`);
    }
    map[name] = path;
  });
  return map;
}

function walk(schema: z.core.$ZodType, path: string[], found: (name: string, path: string) => void): void {
  const env = z.globalRegistry.get(schema)?.env;
  if (env !== undefined) for (const name of typeof env === 'string' ? [env] : env) found(name, path.join('.'));
  const def = schema._zod.def as z.core.$ZodTypeDef & {
    shape?: Record<string, z.core.$ZodType>;
    innerType?: z.core.$ZodType;
    in?: z.core.$ZodType;
    out?: z.core.$ZodType;
  };
  if (def.type === 'object' && def.shape) {
    for (const [key, field] of Object.entries(def.shape)) walk(field, [...path, key], found);
  } else if (def.type === 'pipe') {
    // `.transform()` keeps the schema in `in`, `z.preprocess()` in `out`
    if (def.in) walk(def.in, path, found);
    if (def.out) walk(def.out, path, found);
  } else if (def.innerType) {
    walk(def.innerType, path, found); // optional, nullable, default, prefault, readonly, catch, nonoptional
  }
}
