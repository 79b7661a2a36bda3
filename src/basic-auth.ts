/**
 * The Authorization header of a secret key, as the service takes it (`secret` as the user, the
 * key as the password): one builder for every client of the sandbox in src (the scenario runner,
 * the test kit, `listen`, contract verification, the start banner).
 */
export const basicAuthorization = (secretKey: string): string => `Basic ${Buffer.from(`secret:${secretKey}`).toString('base64')}`;
