import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigError } from '@stoa/config';
import { ConnectorMcpService, UpstreamPool, UpstreamPrompts, UpstreamResources } from '@stoa/connectors';
import type { ToolDefinition } from '@stoa/mcp';
import type { RouterSettings } from './router.config';
import { ROUTER_SETTINGS } from './router.tokens';
import { invalidBridges, proxyTools, routerTools } from './router-tools';

/** The router's MCP surface: every healthy upstream's tools plus search / load_skill / plan over all of them. */
@Injectable()
export class RouterMcpService extends ConnectorMcpService {
  private readonly logger = new Logger(RouterMcpService.name);
  private bridgesChecked = false;

  constructor(
    @Inject(ROUTER_SETTINGS) private readonly settings: RouterSettings,
    pool: UpstreamPool,
  ) {
    const c = settings.config;
    const upstreamResources = new UpstreamResources(pool);
    const prompts = new UpstreamPrompts(pool);
    super(pool, {
      name: `${c.name}-router`,
      instructions: c.description || 'Router aggregating the tools of several code-execution servers.',
      sessionPrefix: 'r',
      relaysTasks: true,
      resources: upstreamResources,
      skills: upstreamResources.skills,
      prompts,
      completions: prompts.completions,
    });
    this.checkBridges(true);
    pool.on('changed', () => this.checkBridges(false));
  }

  /** Router-native tools (served by the router itself, not forwarded). */
  isNative(name: string): boolean {
    return !this.pool.route(name) && this.tools().some((t) => t.name === name);
  }

  protected build(): ToolDefinition[] {
    const c = this.settings.config;
    return [...proxyTools(this.pool), ...routerTools(c.name, this.pool, c.bridges, c.search)];
  }

  /**
   * Bridges must join states some upstream produces / requires (reference §8.6). Checked at start when every
   * upstream answered (refusing to start when one is invalid); otherwise once they all have been seen.
   */
  private checkBridges(atStart: boolean): void {
    const c = this.settings.config;
    if (this.bridgesChecked || !c.bridges.length) return;
    const all = this.pool.upstreams();
    if (!all.every((u) => u.catalog)) {
      if (atStart)
        this.logger.warn(
          { unavailable: all.filter((u) => !u.catalog).map((u) => u.name) },
          'bridges are validated once every upstream has answered',
        );
      return;
    }
    this.bridgesChecked = true;
    const problem = invalidBridges(
      c.name,
      c.bridges,
      all.map((u) => u.catalog!.domain),
    );
    if (!problem) return;
    if (atStart) throw new ConfigError('bridges', problem.split('\n'));
    this.logger.error({ problem }, 'invalid bridge edges: plan results ignore them until the config is fixed');
  }
}
