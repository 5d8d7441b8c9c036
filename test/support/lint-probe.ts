/**
 * test/config/dependency-rule.int writes short-lived files named `lint-probe-*.ts` into src/ (the rule
 * applies to src/ paths) and removes them. Tests that read every file of src/ run beside it and skip
 * them: a probe is not satang's code, and it may vanish between listing a folder and reading the file.
 */
export const isLintProbe = (fileName: string): boolean => /^lint-probe-/.test(fileName.split('/').at(-1) ?? fileName)
