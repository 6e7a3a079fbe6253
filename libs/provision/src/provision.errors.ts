import { AppError, ErrorKind } from '@stoa/core';

/** The kernel environment could not be built (tool missing, install or additional command failed). */
export class EnvironmentBuildError extends AppError {
  readonly code = 'ENVIRONMENT_BUILD_FAILED';
  readonly kind = ErrorKind.unavailable;
}

/** The kernel environment does not exist and `auto_build` forbids building it. */
export class EnvironmentNotReadyError extends AppError {
  readonly code = 'ENVIRONMENT_NOT_READY';
  readonly kind = ErrorKind.unavailable;
}

/** An asset could not be fetched, copied or verified. */
export class AssetProvisionError extends AppError {
  readonly code = 'ASSET_PROVISION_FAILED';
  readonly kind = ErrorKind.unavailable;
}

/** A sidecar could not be started or never became healthy. */
export class SidecarStartError extends AppError {
  readonly code = 'SIDECAR_START_FAILED';
  readonly kind = ErrorKind.unavailable;
}
