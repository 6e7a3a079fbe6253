/** @stoa/transfer: data in and out of sessions — artifacts, download links, send, object transfer, asset tags, handles. */
/** `transfer:` and `publishers:` config, env overrides. */
export {
  publishersConfigSchema,
  transferConfigSchema,
  type PublishersConfig,
  type TransferConfig,
} from './transfer.config';
/** Settings the executor resolves from config, and the optional catalog hook for asset tags. */
export { ASSET_CATALOG, type AssetCatalog, type PeerDestination, type TransferSettings } from './transfer.settings';
/** Artifact discovery in AGORA_OUTPUT_DIR (reference §2.7). */
export {
  artifactNote,
  changedArtifacts,
  mimeOf,
  snapshotOutputs,
  type Artifact,
  type OutputSnapshot,
} from './artifacts/artifacts';
/** Artifacts of the caller's sessions as MCP resources (`artifact://{server}/{session}/{path}`) and result links. */
export { ArtifactResources } from './artifacts/artifact-resources';
/** Safe file access inside directories a kernel can write. */
export { checkRelativeName, openKernelFile, type OpenedFile } from './files/safe-files';
/** Asset tags and handles in code (the execute pipeline's resolve step). */
export { AssetArgumentError, withAssetArguments } from './inputs/asset-arguments';
export { HandleStore } from './inputs/handle-store';
export { DatabaseHandles, LocalHandles, type HandleBackend } from './inputs/handle-backends';
/** Outbound object-transfer policy (reference §6.4) and the peer registry (§6.2). */
export * from './peers/target-url';
export * from './peers/peer-registry';
/** Blob storage (Azure SDK; Azurite in tests). */
export * from './blob/blob-store';
/** Services, the send tool, the module and its migrations. */
export { TransferRuntime } from './transfer.runtime';
export { SendService, type SendInput, type SendResult } from './send/send.service';
export { sendTool } from './send/send.tool';
/** The `<blob>` id extension point and the download-link base URL. */
export { ARTIFACT_RESOLVER, type ArtifactResolver, type PublicUrl } from './inputs/artifact-resolver';
/** The send extension point: an embedding's own `{name}_send` destinations. */
export {
  PUBLISHERS,
  type PublishItem,
  type PublishOutcome,
  type PublishRequest,
  type Publisher,
} from './send/publisher';
/** `POST /object-transfer/receive`: the envelope streamed to a file, loaded by the target kernel; refusals are AppErrors. */
export { ReceiveService } from './receive/receive.service';
export { TransferTooLargeError } from './receive/receive.errors';
/** Stoa's binary object transfer (negotiated with `GET /object-transfer/receive`; others get base64 JSON). */
export {
  BINARY_OBJECT_TYPE,
  capBody,
  decodeObjectFields,
  isBinaryObject,
  OBJECT_FIELDS_HEADER,
  RECEIVE_FORMATS,
} from './receive/binary-body';
/** The piecewise JSON tokenizer the receive body is read with (a dispatcher reads a body's session_id with it). */
export { pieceTokenizer } from './receive/transfer-body';
export { TransferLog, type RecordFilter, type TransferEvent } from './log/transfer-log.service';
export { TRANSFER_MIGRATIONS } from './log/transfer.migrations';
export { TransferModule } from './transfer.module';
