/** No-op development principal from an unverified JWT. */
export { noopPrincipal } from './noop-auth';
/** Bind-address rules: loopback detection, the no-op remote refusal, allowed Host names. */
export { allowedHostsFor, isLoopback, unauthenticatedRemoteRefusal } from './bind';
