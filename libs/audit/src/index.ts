/** `audit:` config. */
export { auditConfigSchema, type AuditConfig } from './audit.config';
/** The audit log service, its module and migrations. */
export { AuditService } from './audit.service';
export { AuditModule } from './audit.module';
export { AUDIT_MIGRATIONS } from './audit.migrations';
/** Audit types. */
export { AuditOutcome, type AuditEvent, type AuditFilter, type AuditRecord } from './audit.types';
