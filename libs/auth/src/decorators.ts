import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Principal } from '@stoa/core';

export const IS_PUBLIC = 'stoa:public';
export const IS_ADMIN = 'stoa:admin';

/** The route needs no principal (health, discovery, catalog). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

/** The route needs the admin app role (no-op auth: loopback callers only). */
export const AdminOnly = (): MethodDecorator & ClassDecorator => SetMetadata(IS_ADMIN, true);

/** Injects the request's principal. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const req = ctx.switchToHttp().getRequest<{ principal?: Principal }>();
  if (!req.principal) throw new Error('CurrentPrincipal used on a route without a principal');
  return req.principal;
});
