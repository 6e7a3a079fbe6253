import { appError, ErrorKind } from '@stoa/core';

/** The kernel environment could not be built (tool missing, install or additional command failed). */
export class EnvironmentBuildError extends appError('ENVIRONMENT_BUILD_FAILED', ErrorKind.unavailable) {}

/** The kernel environment does not exist and `auto_build` forbids building it. */
export class EnvironmentNotReadyError extends appError('ENVIRONMENT_NOT_READY', ErrorKind.unavailable) {}

/** An asset could not be fetched, copied or verified. */
export class AssetProvisionError extends appError('ASSET_PROVISION_FAILED', ErrorKind.unavailable) {}

/** A sidecar could not be started or never became healthy. */
export class SidecarStartError extends appError('SIDECAR_START_FAILED', ErrorKind.unavailable) {}
