// JSON data as YAML for `--output yaml`. Strings that a YAML reader could take for something else
// (numbers, booleans, null, text with `: ` or a leading indicator) are written as JSON strings,
// which YAML 1.2 reads as the same text; so the output reads back as exactly the data.

const PLAIN = /^[A-Za-z_./][\w ./@+-]*$/;
const RESERVED = /^(true|false|null|yes|no|on|off|y|n|~)$/i;

/** A JSON value as a YAML document, ending in a newline. */
export function formatYaml(value: unknown): string {
  return `${lines(value, 0).join('\n')}\n`;
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string')
    return PLAIN.test(value) && !RESERVED.test(value) && !value.endsWith(' ') ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

function isComposite(value: unknown): value is object {
  return (
    typeof value === 'object' &&
    value !== null &&
    (Array.isArray(value) ? value.length > 0 : Object.keys(value).length > 0)
  );
}

function lines(value: unknown, indent: number): string[] {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return [`${pad}[]`];
    return value.flatMap((item) => {
      if (!isComposite(item)) return [`${pad}- ${compact(item)}`];
      const inner = lines(item, indent + 2);
      return [`${pad}- ${inner[0].slice(indent + 2)}`, ...inner.slice(1)];
    });
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return [`${pad}{}`];
    return entries.flatMap(([key, item]) =>
      isComposite(item)
        ? [`${pad}${scalar(key)}:`, ...lines(item, indent + 2)]
        : [`${pad}${scalar(key)}: ${compact(item)}`],
    );
  }
  return [`${pad}${scalar(value)}`];
}

/** A value on one line: a scalar, or an empty list or map. */
function compact(value: unknown): string {
  if (Array.isArray(value)) return '[]';
  if (typeof value === 'object' && value !== null) return '{}';
  return scalar(value);
}
