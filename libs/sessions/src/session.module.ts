import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SessionEntity } from './session.entity';
import { SessionRepository } from './session.repository';
import { SESSION_SETTINGS, SessionService, type SessionSettings } from './session.service';

/** Session lifecycle; needs KernelModule and PersistenceModule in the app. */
@Module({})
export class SessionModule {
  static forRoot(settings: SessionSettings): DynamicModule {
    return {
      module: SessionModule,
      global: true,
      imports: [TypeOrmModule.forFeature([SessionEntity])],
      providers: [{ provide: SESSION_SETTINGS, useValue: settings }, SessionRepository, SessionService],
      exports: [SessionService],
    };
  }
}
