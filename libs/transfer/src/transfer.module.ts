import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ReceiveService } from './receive/receive.service';
import { SendService } from './send/send.service';
import { TransferLog } from './log/transfer-log.service';
import { ArtifactEntity, TransferEntity } from './log/transfer.entities';
import { HandleChunkEntity, HandleEntity } from './inputs/handle.entities';
import { TransferRuntime } from './transfer.runtime';
import { TRANSFER_SETTINGS, type TransferSettings } from './transfer.settings';

/** Data in and out of sessions; needs PersistenceModule (with TRANSFER_MIGRATIONS) and SessionModule in the app. */
@Module({})
export class TransferModule {
  static forRoot(settings: TransferSettings, extra: Provider[] = []): DynamicModule {
    return {
      module: TransferModule,
      global: true,
      imports: [TypeOrmModule.forFeature([ArtifactEntity, TransferEntity, HandleEntity, HandleChunkEntity])],
      providers: [
        { provide: TRANSFER_SETTINGS, useValue: settings },
        ...extra,
        TransferRuntime,
        TransferLog,
        SendService,
        ReceiveService,
      ],
      exports: [TransferRuntime, TransferLog, SendService, ReceiveService],
    };
  }
}
