import { type DynamicModule, Module } from '@nestjs/common';
import { EXECUTION_HOOKS, type ExecutionHooks } from './execution-hooks';
import { BatchRunner } from './batch-runner.service';
import { CellRunner } from './cell-runner.service';
import { EXECUTION_SETTINGS, type ExecutionSettings } from './execution.config';
import { ExecutionActivity } from './execution-activity';
import { ExecutionService } from './execution.service';

/** The execute pipeline; needs SessionModule in the app. */
@Module({})
export class ExecutionModule {
  /** `hooks`: the embedding's validate / preprocess / postprocess (none by default). */
  static forRoot(settings: ExecutionSettings, hooks?: ExecutionHooks): DynamicModule {
    return {
      module: ExecutionModule,
      global: true,
      providers: [
        { provide: EXECUTION_SETTINGS, useValue: settings },
        ...(hooks ? [{ provide: EXECUTION_HOOKS, useValue: hooks }] : []),
        CellRunner,
        ExecutionActivity,
        ExecutionService,
        BatchRunner,
      ],
      exports: [ExecutionService, BatchRunner],
    };
  }
}
