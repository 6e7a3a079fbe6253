import { Controller, Get, Inject, NotFoundException, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Public } from './decorators';
import {
  PROTECTED_RESOURCE_SETTINGS,
  protectedResourceMetadata,
  type ProtectedResourceSettings,
} from './protected-resource';

/** RFC 9728 (and, in no-op mode, a minimal RFC 8414 stub so OAuth-probing clients do not fail). */
@Public()
@Controller('.well-known')
export class WellKnownController {
  constructor(@Inject(PROTECTED_RESOURCE_SETTINGS) private readonly settings: ProtectedResourceSettings) {}

  @Get(['oauth-protected-resource', 'oauth-protected-resource/mcp'])
  protectedResource(@Req() req: Request): Record<string, unknown> {
    return protectedResourceMetadata(this.settings, `${req.protocol}://${req.get('host') ?? 'localhost'}`);
  }

  @Get(['oauth-authorization-server', 'oauth-authorization-server/mcp'])
  authorizationServer(@Req() req: Request): Record<string, unknown> {
    if (this.settings.auth.mode !== 'noop')
      throw new NotFoundException('OAuth authorization server metadata is not available.');
    const issuer = `${req.protocol}://${req.get('host') ?? 'localhost'}`;
    return {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
    };
  }
}
