import { type DynamicModule, Module } from '@nestjs/common';
import { BatchRunner } from './batch-runner';
import { EXECUTION_SETTINGS, ExecutionService, type ExecutionSettings } from './execution.service';

/** The execute pipeline; needs SessionModule in the app. */
@Module({})
export class ExecutionModule {
  static forRoot(settings: ExecutionSettings): DynamicModule {
    return {
      module: ExecutionModule,
      global: true,
      providers: [{ provide: EXECUTION_SETTINGS, useValue: settings }, ExecutionService, BatchRunner],
      exports: [ExecutionService, BatchRunner],
    };
  }
}
