import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { UpstreamPool } from './upstream-pool';

/** Closes a connector's upstream pool (connections, timers) on shutdown. */
@Injectable()
export class PoolLifecycle implements OnApplicationShutdown {
  constructor(private readonly pool: UpstreamPool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.close();
  }
}
