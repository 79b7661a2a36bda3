import { describe, expect, it } from 'vitest';
import { pixQrPng } from '../../src/pages/pix-qr.js';
import { QrRenderer } from '../../src/pages/qr-renderer.js';

const code = (n: number): string =>
  `00020101021226900014br.gov.bcb.pix2568pix.sandbox.local/qr/v2/cobv/${String(n).padStart(8, '0')}-c70b-478f-b95c-12729b90ca255204000053039865406150.005802BR5913Loja Sandbox6009SAO PAULO62070503***6304ABCD`;
const here = async (text: string): Promise<string> => (await pixQrPng(text)).toString('base64');

describe('QrRenderer', () => {
  it('draws on its worker the same PNG as the main thread, for many codes at once, each to its own caller', async () => {
    const renderer = new QrRenderer();
    const codes = Array.from({ length: 40 }, (_, i) => code(i));
    const drawn = await Promise.all(codes.map((c) => renderer.render(c)));
    expect(drawn).toEqual(await Promise.all(codes.map(here)));
    expect(new Set(drawn).size).toBe(codes.length);
  });

  it('passes on why a code cannot be drawn', async () => {
    await expect(new QrRenderer().render('')).rejects.toThrow(/non-empty BR Code/);
  });

  it('draws on the main thread when its worker cannot run: the jobs it held, and every later one', async () => {
    const dying = new QrRenderer(new URL('data:text/javascript,process.exit(3)'));
    const first = await Promise.all([dying.render(code(1)), dying.render(code(2))]);
    expect(first).toEqual([await here(code(1)), await here(code(2))]);
    expect(await dying.render(code(3))).toBe(await here(code(3)));
  });
});
