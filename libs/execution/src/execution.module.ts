import { type DynamicModule, Module } from '@nestjs/common';
import { BatchRunner } from './batch-runner.service';
import { CellRunner } from './cell-runner.service';
import { EXECUTION_SETTINGS, type ExecutionSettings } from './execution.config';
import { ExecutionActivity } from './execution-activity';
import { ExecutionService } from './execution.service';

/** The execute pipeline; needs SessionModule in the app. */
@Module({})
export class ExecutionModule {
  static forRoot(settings: ExecutionSettings): DynamicModule {
    return {
      module: ExecutionModule,
      global: true,
      providers: [
        { provide: EXECUTION_SETTINGS, useValue: settings },
        CellRunner,
        ExecutionActivity,
        ExecutionService,
        BatchRunner,
      ],
      exports: [ExecutionService, BatchRunner],
    };
  }
}
