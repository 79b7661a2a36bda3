import { describe, expect, it } from 'vitest';
import { escapeHtml, html, raw } from '../../src/pages/html.js';

describe('html', () => {
  it('escapes interpolated strings, in text and in attributes alike', () => {
    const name = `<script>alert("x")</script> & 'y'`;
    const out = html`<p title="${name}">${name}</p>`.toString();
    expect(out).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;">' +
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;</p>',
    );
  });

  it('nests html fragments without escaping them twice, and renders arrays', () => {
    const items = ['a<b', 'c'].map((s) => html`<li>${s}</li>`);
    expect(html`<ul>${items}</ul>`.toString()).toBe('<ul><li>a&lt;b</li><li>c</li></ul>');
  });

  it('renders null, undefined and false as nothing, numbers and true as text', () => {
    expect(html`${null}${undefined}${false}|${0}|${true}`.toString()).toBe('|0|true');
  });

  it('leaves raw markup alone and escapes the five special characters', () => {
    expect(html`${raw('<b>')}`.toString()).toBe('<b>');
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
  });
});
