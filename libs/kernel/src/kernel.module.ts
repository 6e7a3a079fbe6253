import { type DynamicModule, Module } from '@nestjs/common';
import { KERNEL_SETTINGS, KernelService, type KernelSettings } from './kernel.service';

/** Provides {@link KernelService} for the given settings. */
@Module({})
export class KernelModule {
  static forRoot(settings: KernelSettings): DynamicModule {
    return {
      module: KernelModule,
      global: true,
      providers: [{ provide: KERNEL_SETTINGS, useValue: settings }, KernelService],
      exports: [KernelService],
    };
  }
}
