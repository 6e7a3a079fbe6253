import { DefaultAzureCredential, type TokenCredential } from '@azure/identity';
import { BlobServiceClient, type ContainerClient } from '@azure/storage-blob';
import type { BlobAccessConfig } from './catalog.config';
import { blobEndpoint, type BlobEndpoint } from './catalog-sources';

/**
 * Blob service clients per storage account: the account `catalog.blob` names is reached as configured (connection
 * string, else its URL with DefaultAzureCredential); any other account at `https://{account}.blob.core.windows.net`
 * with DefaultAzureCredential.
 */
export class BlobClients {
  private readonly endpoint?: BlobEndpoint;
  private readonly services = new Map<string, BlobServiceClient>();
  private credential?: TokenCredential;

  constructor(private readonly access?: BlobAccessConfig) {
    this.endpoint = access ? blobEndpoint(access) : undefined;
  }

  container(account: string, container: string): ContainerClient {
    let service = this.services.get(account);
    if (!service) {
      service = this.create(account);
      this.services.set(account, service);
    }
    return service.getContainerClient(container);
  }

  private create(account: string): BlobServiceClient {
    if (this.endpoint?.account === account) {
      if (this.access?.connection_string) return BlobServiceClient.fromConnectionString(this.access.connection_string);
      return new BlobServiceClient(this.endpoint.url, this.defaultCredential());
    }
    return new BlobServiceClient(`https://${account}.blob.core.windows.net`, this.defaultCredential());
  }

  private defaultCredential(): TokenCredential {
    this.credential ??= new DefaultAzureCredential();
    return this.credential;
  }
}
