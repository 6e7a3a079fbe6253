import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, databaseKind, type PersistenceOptions } from './persistence.options';
import { bindNumbersOnSqlite } from './sqlite-binding';

/** Opens the database (SQLite file in WAL mode, or PostgreSQL) and runs every migration at start. */
@Module({})
export class PersistenceModule {
  static forRoot(opts: PersistenceOptions): DynamicModule {
    return {
      module: PersistenceModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ ...buildDataSourceOptions(opts), autoLoadEntities: true }),
          dataSourceFactory: async (options) => {
            if (!options) throw new Error('no data source options');
            if (databaseKind(opts.database) === 'postgres' && opts.database.schema) {
              await ensurePostgresSchema(opts.database.url as string, opts.database.schema);
            }
            return bindNumbersOnSqlite(await new DataSource(options).initialize());
          },
        }),
      ],
    };
  }
}

/** Creates a PostgreSQL schema if missing (migrations need it to exist). */
export async function ensurePostgresSchema(url: string, schema: string): Promise<void> {
  const ds = new DataSource({ type: 'postgres', url });
  await ds.initialize();
  try {
    await ds.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '')}"`);
  } finally {
    await ds.destroy();
  }
}
