import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BoardRepository } from './board/board.repository';
import { BoardService } from './board/board.service';
import { EventBus } from './bus/event-bus';
import { ChatRepository } from './chat/chat.repository';
import { ChatService } from './chat/chat.service';
import type { CoordinationOptions } from './coordination.config';
import { COORDINATION_ENTITIES } from './coordination.entities';
import { COORDINATION_OPTIONS } from './coordination.tokens';
import { Transactions } from './coordination.tx';
import { LockRepository } from './locks/lock.repository';
import { LockService } from './locks/lock.service';
import { SignalService } from './locks/signal.service';
import { RegistryRepository } from './registry/registry.repository';
import { RegistryService } from './registry/registry.service';

/** A coordination square: registry, chat, board, locks and signals. Needs PersistenceModule with COORDINATION_MIGRATIONS. */
@Module({})
export class CoordinationModule {
  static forRoot(opts: CoordinationOptions): DynamicModule {
    return {
      module: CoordinationModule,
      imports: [TypeOrmModule.forFeature(COORDINATION_ENTITIES)],
      providers: [
        { provide: COORDINATION_OPTIONS, useValue: opts },
        {
          provide: EventBus,
          useFactory: async () => {
            const bus = new EventBus(opts.replica, `stoa:square:${opts.name}`, opts.redisUrl);
            await bus.start();
            return bus;
          },
        },
        Transactions,
        RegistryRepository,
        ChatRepository,
        BoardRepository,
        LockRepository,
        RegistryService,
        ChatService,
        BoardService,
        LockService,
        SignalService,
      ],
      exports: [EventBus, RegistryService, ChatService, BoardService, LockService, SignalService],
    };
  }
}
