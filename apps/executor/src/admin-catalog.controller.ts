import { Controller, HttpCode, Optional, Post } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '@stoa/auth';
import { NotFoundError } from '@stoa/core';
import { CatalogService } from '@stoa/catalog';

/** Operator API: re-index the data catalog after adding or removing data (no restart needed). */
@ApiTags('catalog')
@AdminOnly()
@Controller('admin/v1/catalog')
export class AdminCatalogController {
  constructor(@Optional() private readonly catalog?: CatalogService) {}

  @Post('reindex')
  @HttpCode(200)
  @ApiOkResponse({ description: '{indexed: number of new artifacts}' })
  async reindex() {
    if (!this.catalog)
      throw new NotFoundError(
        'This server has no data catalog. Configure catalog.file or catalog.sources in server.yaml.',
      );
    return { success: true, indexed: await this.catalog.index() };
  }
}
