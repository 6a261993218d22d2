// A map drawn on the server as SVG (plate carrée over the data's extent): what a page shows
// without JavaScript, and what the script's map replaces. Points are dots (a grid cell's dot grows
// with its rows); lines and polygons are paths, each ring cut to at most MAX_RING positions.
import type { Bbox } from '../search/spatial-geojson.ts';

const WIDTH = 640;
const SVG_FEATURES = 2000;
const MAX_RING = 500;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface Projection {
  width: number;
  height: number;
  at(lon: number, lat: number): [number, number];
}

function projection(extent: Bbox): Projection {
  // At least a hundredth of a degree wide, with a margin of a twentieth on each side.
  const span = (lo: number, hi: number) => Math.max(hi - lo, 0.01);
  const [w0, h0] = [span(extent.minx, extent.maxx), span(extent.miny, extent.maxy)];
  const minx = (extent.minx + extent.maxx) / 2 - w0 * 0.55;
  const maxy = (extent.miny + extent.maxy) / 2 + h0 * 0.55;
  const [w, h] = [w0 * 1.1, h0 * 1.1];
  // A degree of longitude is shorter away from the equator.
  const shrink = Math.max(0.2, Math.cos((((extent.miny + extent.maxy) / 2) * Math.PI) / 180));
  const height = Math.round(Math.min(400, Math.max(160, (WIDTH * h) / (w * shrink))));
  const round = (v: number) => Math.round(v * 10) / 10;
  return { width: WIDTH, height, at: (lon, lat) => [round(((lon - minx) / w) * WIDTH), round(((maxy - lat) / h) * height)] };
}

function thin(ring: number[][]): number[][] {
  if (ring.length <= MAX_RING) return ring;
  const step = Math.ceil(ring.length / MAX_RING);
  return [...ring.filter((_, i) => i % step === 0), ring[ring.length - 1]];
}

function shape(g: any, p: Projection, out: string[]): void {
  const line = (ring: number[][], close: boolean) =>
    thin(ring)
      .map((c, i) => `${i ? 'L' : 'M'}${p.at(c[0], c[1]).join(' ')}`)
      .join('') + (close ? 'Z' : '');
  const dot = (c: number[]) => {
    const [x, y] = p.at(c[0], c[1]);
    out.push(`<circle cx="${x}" cy="${y}" r="4" class="map-dot"/>`);
  };
  switch (g?.type) {
    case 'Point':
      dot(g.coordinates);
      return;
    case 'MultiPoint':
      g.coordinates.forEach(dot);
      return;
    case 'LineString':
      out.push(`<path d="${line(g.coordinates, false)}" class="map-line"/>`);
      return;
    case 'MultiLineString':
      out.push(`<path d="${g.coordinates.map((l: number[][]) => line(l, false)).join('')}" class="map-line"/>`);
      return;
    case 'Polygon':
      out.push(`<path d="${g.coordinates.map((r: number[][]) => line(r, true)).join('')}" class="map-area"/>`);
      return;
    case 'MultiPolygon':
      out.push(
        `<path d="${g.coordinates
          .flat()
          .map((r: number[][]) => line(r, true))
          .join('')}" class="map-area"/>`,
      );
      return;
    case 'GeometryCollection':
      for (const c of g.geometries) shape(c, p, out);
  }
}

interface MapDrawing {
  extent: Bbox | null;
  /** [longitude, latitude, rows] */
  points?: [number, number, number, ...unknown[]][];
  geometries?: unknown[];
}

/** The SVG of a map (role img, named by its title and described by description); '' when there is nothing to draw. */
export function mapSvg(drawing: MapDrawing, id: string, title: string, description: string): string {
  if (!drawing.extent) return '';
  const p = projection(drawing.extent);
  const out: string[] = [];
  const most = Math.max(1, ...(drawing.points ?? []).map((x) => x[2]));
  for (const [lon, lat, n] of drawing.points ?? []) {
    const [x, y] = p.at(lon, lat);
    const r = n > 1 ? Math.round((2 + 8 * Math.sqrt(n / most)) * 10) / 10 : 3;
    out.push(`<circle cx="${x}" cy="${y}" r="${r}" class="map-dot"/>`);
  }
  for (const g of (drawing.geometries ?? []).slice(0, SVG_FEATURES)) shape(g, p, out);
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${p.width} ${p.height}" role="img" aria-labelledby="${id}-title ${id}-desc" class="map-svg">
<title id="${id}-title">${esc(title)}</title><desc id="${id}-desc">${esc(description)}</desc>
<rect width="${p.width}" height="${p.height}" class="map-background"/>
${out.join('\n')}
</svg>`;
}
