import { describe, expect, it } from 'vitest';
import { basicAuthorization } from '../src/basic-auth.js';

describe('basicAuthorization', () => {
  it('is Basic base64("secret:" + key), the credentials the service takes', () => {
    const header = basicAuthorization('sk_test_abc+/=é');
    expect(header).toMatch(/^Basic [A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8')).toBe('secret:sk_test_abc+/=é');
  });
});
