/** @stoa/transfer: data in and out of sessions — artifacts, download links, send, object transfer, asset tags, handles. */
/** `transfer:` and `publishers:` config, env overrides. */
export { MAX_TRANSFER_BYTES, publishersConfigSchema, TRANSFER_ENV, transferConfigSchema, type PublishersConfig, type TransferConfig } from './transfer.config';
/** Settings the executor resolves from config, and the optional catalog hook for asset tags. */
export { ASSET_CATALOG, TRANSFER_SETTINGS, type AssetCatalog, type PeerDestination, type TransferSettings } from './transfer.settings';
/** Artifact discovery in AGORA_OUTPUT_DIR (reference §2.7). */
export { artifactNote, changedArtifacts, snapshotOutputs, type Artifact, type OutputSnapshot } from './artifacts';
/** Signed, expiring download links. */
export { ArtifactLinks } from './artifact-links';
/** Safe file access inside directories a kernel can write. */
export { checkRelativeName, openKernelDir, openKernelFile, unlinkKernelFile, type OpenedFile } from './safe-files';
/** Asset tags and handles in code (the execute pipeline's resolve step). */
export { asSerializer, CodeInputs } from './code-inputs';
export { AssetResolver, parseTag, TAG_GUIDANCE } from './asset-resolver';
export { AssetArgumentError, defaultAssetExempt, withAssetArguments } from './asset-arguments';
export { HANDLE_RE, HandleStore } from './handle-store';
/** Outbound object-transfer policy (reference §6.4) and the peer registry (§6.2). */
export * from './target-url';
export * from './peer-registry';
/** Blob storage (Azure SDK; Azurite in tests). */
export * from './blob-store';
/** Services, the send tool, the module and its migrations. */
export { TransferRuntime } from './transfer.runtime';
export { SendService, type SendInput, type SendResult } from './send.service';
export { sendTool } from './send.tool';
export { ReceiveService, maxReceiveBodyBytes, type ReceivedObject } from './receive.service';
/** Refusals of the receive endpoint (the reference's messages; the controller maps their kinds to statuses). */
export * from './receive.errors';
export { TransferBodyParser, type ParsedTransferBody } from './transfer-body';
export { TransferLog, type RecordFilter, type TransferEvent } from './transfer-log.service';
export { ArtifactEntity, TransferEntity } from './transfer.entities';
export { TRANSFER_MIGRATIONS } from './transfer.migrations';
export { TransferModule } from './transfer.module';
