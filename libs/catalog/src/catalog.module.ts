import { type DynamicModule, Module } from '@nestjs/common';
import type { CatalogSettings } from './catalog.types';
import { CATALOG_SETTINGS, CatalogService } from './catalog.service';

/** The data catalog; needs PersistenceModule (with CATALOG_MIGRATIONS) in the app. Indexes at start unless told not to. */
@Module({})
export class CatalogModule {
  static forRoot(settings: CatalogSettings): DynamicModule {
    return {
      module: CatalogModule,
      global: true,
      providers: [{ provide: CATALOG_SETTINGS, useValue: settings }, CatalogService],
      exports: [CatalogService],
    };
  }
}
