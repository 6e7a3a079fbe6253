/** The admin token every test-started server gets (STOA_ADMIN_TOKEN): no-op servers require it on /admin/v1. */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

/** Headers for /admin/v1 calls to a no-op test server. */
export const ADMIN = { 'x-stoa-admin-token': TEST_ADMIN_TOKEN } as const;
