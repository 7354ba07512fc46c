// ADF loads a hook as a script body, not a module: its import and export statements are rewritten
// first. The host runs hooks through this rewrite and the function picker reads files through it,
// so both see the script ADF would compile.

// The reference's rewrite of ES module syntax into the script body, as regexes over the text.
// A replacement keeps the newlines it swallows, so every line stays where the user wrote it.
const keepLines = (match, text) => text + '\n'.repeat((match.match(/\n/g) ?? []).length);
const REWRITES = [
  [
    /import\s*\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]\s*;?/g,
    (m, names, mod) =>
      keepLines(
        m,
        `const {${names.replace(/\s+as\s+/g, ': ').replace(/\s+/g, ' ')}} = await __require('${mod}');`,
      ),
  ],
  [
    /import\s*\*\s*as\s+([A-Za-z_$][\w$]*)\s+from\s*['"]([^'"]+)['"]\s*;?/g,
    (m, name, mod) => keepLines(m, `const ${name} = await __require('${mod}');`),
  ],
  [
    /import\s+([A-Za-z_$][\w$]*)\s+from\s*['"]([^'"]+)['"]\s*;?/g,
    (m, name, mod) => keepLines(m, `const ${name} = await __require('${mod}');`),
  ],
  [/^[ \t]*export\s*\{[^}]*\}(\s*from\s*['"][^'"]+['"])?[ \t]*;?/gm, (m) => keepLines(m, '')],
  [/\bexport\s+default\s+/g, () => ''],
  [/\bexport\s+(?=(async\s+function|function|const|let|var|class)\b)/g, () => ''],
];

export function rewrite(text) {
  return REWRITES.reduce((out, [pattern, replace]) => out.replace(pattern, replace), text);
}
