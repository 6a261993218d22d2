// WKT geometries (locn:geometry as gsp:wktLiteral) as GeoJSON text: the shapes catalogs use for
// coverage (POINT, LINESTRING, POLYGON, MULTIPOINT, MULTILINESTRING, MULTIPOLYGON), 2D.
// A GeoSPARQL literal may start with a CRS IRI; only the default (CRS84) is understood.

type Position = [number, number];

const TYPES: Record<string, { type: string; depth: number }> = {
  POINT: { type: 'Point', depth: 0 },
  LINESTRING: { type: 'LineString', depth: 1 },
  MULTIPOINT: { type: 'MultiPoint', depth: 1 },
  POLYGON: { type: 'Polygon', depth: 2 },
  MULTILINESTRING: { type: 'MultiLineString', depth: 2 },
  MULTIPOLYGON: { type: 'MultiPolygon', depth: 3 },
};

const CRS84 = /^<https?:\/\/www\.opengis\.net\/def\/crs\/OGC\/1\.3\/CRS84>\s*/i;

/** GeoJSON text of a WKT geometry, or undefined when it is not one of the shapes above. */
export function wktToGeoJson(wkt: string): string | undefined {
  const text = wkt.trim().replace(CRS84, '');
  if (text.startsWith('<')) return undefined;
  const m = /^([A-Za-z]+)\s*(?:Z|M|ZM)?\s*(\(.*\))\s*$/s.exec(text);
  if (!m) return undefined;
  const kind = TYPES[m[1]!.toUpperCase()];
  if (!kind) return undefined;
  try {
    const nested = nest(m[2]!);
    const coordinates = shape(nested, kind.depth);
    return coordinates === undefined ? undefined : JSON.stringify({ type: kind.type, coordinates });
  } catch {
    return undefined;
  }
}

type Nested = string | Nested[];

/** Splits "( (1 2, 3 4), (5 6) )" into nested arrays of coordinate strings. */
function nest(text: string): Nested[] {
  const stack: Nested[][] = [[]];
  let token = '';
  const flush = () => {
    if (token.trim()) stack[stack.length - 1]!.push(token.trim());
    token = '';
  };
  for (const c of text) {
    if (c === '(') {
      const child: Nested[] = [];
      stack[stack.length - 1]!.push(child);
      stack.push(child);
    } else if (c === ')') {
      flush();
      if (stack.length === 1) throw new Error('unbalanced');
      stack.pop();
    } else if (c === ',') flush();
    else token += c;
  }
  if (stack.length !== 1 || token.trim()) throw new Error('unbalanced');
  return stack[0]!;
}

function position(text: string): Position {
  const parts = text.split(/\s+/).map(Number);
  if (parts.length < 2 || parts.some((n) => !Number.isFinite(n))) throw new Error('bad position');
  return [parts[0]!, parts[1]!];
}

/** The coordinates at a nesting depth (0: a position, 1: a list of positions, ...). */
function shape(nested: Nested[], depth: number): unknown {
  const list = nested[0];
  if (!Array.isArray(list) || nested.length !== 1) throw new Error('bad geometry');
  return level(list, depth);
}

function level(list: Nested[], depth: number): unknown {
  if (depth === 0) {
    if (list.length !== 1 || typeof list[0] !== 'string') throw new Error('bad point');
    return position(list[0]);
  }
  if (depth === 1) return list.map((item) => position(typeof item === 'string' ? item : single(item)));
  return list.map((item) => {
    if (typeof item === 'string') throw new Error('bad nesting');
    return level(item, depth - 1);
  });
}

/** MULTIPOINT ((1 2), (3 4)) writes each point in its own parentheses. */
function single(item: Nested[]): string {
  if (item.length !== 1 || typeof item[0] !== 'string') throw new Error('bad point');
  return item[0];
}
