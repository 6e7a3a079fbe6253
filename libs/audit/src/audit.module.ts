import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AuditConfig } from './audit.config';
import { AuditEntity } from './audit.entity';
import { AUDIT_CONFIG, AuditService } from './audit.service';

/** The audit log; needs PersistenceModule (with AUDIT_MIGRATIONS) in the app. */
@Module({})
export class AuditModule {
  static forRoot(config: AuditConfig): DynamicModule {
    return {
      module: AuditModule,
      global: true,
      imports: [TypeOrmModule.forFeature([AuditEntity])],
      providers: [{ provide: AUDIT_CONFIG, useValue: config }, AuditService],
      exports: [AuditService],
    };
  }
}
