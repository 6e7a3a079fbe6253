import type { Principal } from '@stoa/core';
import { TestOidcIssuer } from '../../../test/support/oidc-issuer';
import type { ConnectorIdentity } from '../src/credentials';

/** The client secret of the connector's own app registration on the test issuer. */
export const CONNECTOR_SECRET = 'router-secret-Zq8~vX3';
/** An upstream's audience that is not the connector's own. */
export const UPSTREAM = 'api://files-upstream';

/** A local Entra issuer with the connector's own app registration (its client id) holding {@link CONNECTOR_SECRET}. */
export async function startConnectorIssuer(): Promise<TestOidcIssuer> {
  const idp = await TestOidcIssuer.start();
  idp.registerClient(idp.clientId, CONNECTOR_SECRET);
  return idp;
}

/** The connector's Entra identity on `idp`: its app accepts both forms of its audience. */
export function entraConnector(idp: TestOidcIssuer): ConnectorIdentity {
  return {
    mode: 'entra',
    audiences: [idp.clientId, `api://${idp.clientId}`],
    tenantId: idp.tenant,
    clientId: idp.clientId,
    authority: idp.authority,
  };
}

/** A signed-in user as the router's Entra auth would build it (a fresh access_as_user token unless given). */
export async function entraUser(idp: TestOidcIssuer, oid: string, token?: string): Promise<Principal> {
  return {
    id: `${oid}@${idp.tenant}`,
    roles: [],
    scopes: ['access_as_user'],
    source: 'entra',
    token: token ?? (await idp.token({ oid, scp: 'access_as_user' })),
  };
}
