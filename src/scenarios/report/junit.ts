import { basename } from 'node:path';
import type { RunSummary, ScenarioResult, StepResult } from '../types.js';
import { formatFailure, PLAIN, stepLabel, stripAnsi } from './format.js';

/** Text fit for XML: the five entities escaped, characters XML 1.0 forbids dropped. */
export function escapeXml(text: string): string {
  return stripAnsi(text)
    .replace(/[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const secs = (ms: number): string => (ms / 1000).toFixed(3);

function testcase(result: ScenarioResult, step: StepResult): string {
  const attrs = `name="${escapeXml(stepLabel(step))}" classname="${escapeXml(`${result.name} (${basename(result.file)})`)}" file="${escapeXml(result.file)}" line="${step.line}" time="${secs(step.durationMs)}"`;
  if (step.outcome === 'skipped') return `    <testcase ${attrs}>\n      <skipped message="an earlier step failed"/>\n    </testcase>`;
  if (step.outcome === 'passed' || !step.failure) return `    <testcase ${attrs}/>`;
  const body = [`${result.file}:${step.line}: ${stepLabel(step)}`, ...formatFailure(step.failure, '', PLAIN)].join('\n');
  return `    <testcase ${attrs}>\n      <failure message="${escapeXml(step.failure.message)}" type="ScenarioStepFailure">${escapeXml(body)}</failure>\n    </testcase>`;
}

/**
 * JUnit XML (the Ant/Jenkins dialect CI systems read): one <testsuite> per scenario, one
 * <testcase> per step; a failed step carries <failure> with expected versus actual, the
 * steps after it are <skipped/>.
 */
export function toJUnitXml(summary: RunSummary): string {
  const count = (outcome: StepResult['outcome']) => summary.results.reduce((n, r) => n + r.steps.filter((s) => s.outcome === outcome).length, 0);
  const tests = summary.results.reduce((n, r) => n + r.steps.length, 0);
  const suites = summary.results.map((result, i) => {
    const failures = result.steps.filter((s) => s.outcome === 'failed').length;
    const skipped = result.steps.filter((s) => s.outcome === 'skipped').length;
    const head = `  <testsuite id="${i}" name="${escapeXml(result.name)}" file="${escapeXml(result.file)}" tests="${result.steps.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${secs(result.durationMs)}" timestamp="${result.startedAt.replace(/\.\d{3}Z$/, '')}">`;
    const props = `    <properties>\n      <property name="baseUrl" value="${escapeXml(summary.baseUrl)}"/>\n    </properties>`;
    return [head, props, ...result.steps.map((step) => testcase(result, step)), '  </testsuite>'].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="payments-sandbox scenarios" tests="${tests}" failures="${count('failed')}" errors="0" skipped="${count('skipped')}" time="${secs(summary.durationMs)}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
