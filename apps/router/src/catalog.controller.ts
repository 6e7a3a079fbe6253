import { Controller, Get, Inject } from '@nestjs/common';
import { Public } from '@stoa/auth';
import { UpstreamPool } from '@stoa/connectors';
import { listedTools } from '@stoa/mcp';
import type { RouterSettings } from './router.config';
import { ROUTER_SETTINGS } from './router.tokens';
import { RouterMcpService } from './router-mcp.service';

/**
 * `GET /catalog` of the router: every healthy upstream's tools **and skills** (each tagged with its server), its
 * states, and the router's own MCP tool list — so a router can sit behind another router without losing skills.
 */
@Public()
@Controller()
export class CatalogController {
  constructor(
    @Inject(ROUTER_SETTINGS) private readonly settings: RouterSettings,
    private readonly pool: UpstreamPool,
    private readonly mcp: RouterMcpService,
  ) {}

  @Get('catalog')
  catalog() {
    const live = this.pool.upstreams().filter((u) => u.catalog);
    const param = (p: { name: string; type: string; description: string; default?: unknown }) => ({
      name: p.name,
      type: p.type,
      description: p.description,
      default: p.default ?? null,
    });
    return {
      server_name: this.settings.config.name,
      tools: live.flatMap((u) =>
        u.catalog!.domain.tools.map((t) => ({
          name: t.name,
          description: t.description,
          required_parameters: t.parameters.filter((p) => p.required).map(param),
          optional_parameters: t.parameters.filter((p) => !p.required).map(param),
          return_spec: t.returns,
          module: t.module,
          server_name: u.catalog!.serverName,
          state_transition: { requires: t.requires, produces: t.produces },
          affordances: t.affordances,
        })),
      ),
      skills: live.flatMap((u) =>
        u.catalog!.domain.skills.map((s) => ({
          name: s.name,
          description: s.description,
          domain: s.domain,
          states: s.states,
          server_name: u.catalog!.serverName,
          upstream: u.name,
        })),
      ),
      states: live.flatMap((u) => u.catalog!.domain.states),
      mcp_tools: listedTools(this.mcp.tools()),
    };
  }
}
