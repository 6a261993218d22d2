// Maps, progressively enhanced (each page works without this file, showing an SVG drawn on the
// server): a Leaflet map replaces the drawing of each [data-map-source] element, with tiles when the
// site has a tile URL; more than CLUSTER_ABOVE points are grouped into clusters. A
// [data-bbox-form] form gets a map on which a box is drawn (drag) into its ext_bbox inputs.
/* global L */
const CLUSTER_ABOVE = 2000;

function baseMap(element, tiles, attribution) {
  // a maximum zoom of its own: clustering needs one, and without tiles no layer gives it
  const map = L.map(element, { worldCopyJump: true, attributionControl: !!tiles, maxZoom: 18 });
  if (tiles) L.tileLayer(tiles, { attribution, maxZoom: 18 }).addTo(map);
  return map;
}

const fit = (map, e) => {
  if (!e) return map.setView([20, 0], 1);
  if (e.minx === e.maxx && e.miny === e.maxy) return map.setView([e.miny, e.minx], 10);
  map.fitBounds(
    [
      [e.miny, e.minx],
      [e.maxy, e.maxx],
    ],
    { padding: [12, 12], maxZoom: 14 },
  );
};

const dotStyle = { radius: 5, color: '#1d4f91', weight: 1, fillColor: '#2f6fbf', fillOpacity: 0.8 };

function pointsLayer(data, cluster) {
  const many = data.points.reduce((n, p) => n + p[2], 0) > CLUSTER_ABOVE;
  const group =
    cluster && many && L.markerClusterGroup
      ? L.markerClusterGroup({
          chunkedLoading: true,
          iconCreateFunction: (c) => {
            const n = c.getAllChildMarkers().reduce((s, m) => s + (m.options.rows || 1), 0);
            const size = n < 100 ? 'small' : n < 10000 ? 'medium' : 'large';
            return L.divIcon({
              html: `<div><span>${n.toLocaleString()}</span></div>`,
              className: `marker-cluster marker-cluster-${size}`,
              iconSize: L.point(40, 40),
            });
          },
        })
      : L.featureGroup();
  for (const [lon, lat, rows, label] of data.points) {
    const marker = L.circleMarker([lat, lon], { ...dotStyle, rows, radius: rows > 1 ? Math.min(14, 4 + Math.log2(rows)) : 5 });
    const text = [label, rows > 1 ? `${rows.toLocaleString()} rows` : null].filter(Boolean).join(' · ');
    if (text) marker.bindTooltip(text);
    group.addLayer(marker);
  }
  return group;
}

function featuresLayer(data) {
  return L.geoJSON(
    data.features.map((f) => ({ type: 'Feature', geometry: f.geometry, properties: { label: f.label } })),
    {
      style: { color: '#1d4f91', weight: 2, fillOpacity: 0.2 },
      pointToLayer: (_, latlng) => L.circleMarker(latlng, dotStyle),
      onEachFeature: (f, layer) => {
        if (f.properties.label) layer.bindTooltip(String(f.properties.label));
      },
    },
  );
}

function showMap(element) {
  const source = document.getElementById(element.dataset.mapSource);
  if (!source) return;
  const data = JSON.parse(source.textContent);
  const canvas = document.createElement('div');
  canvas.className = 'map-leaflet';
  canvas.setAttribute('role', 'region');
  canvas.setAttribute('aria-label', element.dataset.mapLabel || 'Map');
  element.replaceChildren(canvas);
  const map = baseMap(canvas, element.dataset.tiles, element.dataset.attribution);
  const layer =
    data.kind === 'points'
      ? pointsLayer(data, element.dataset.cluster !== 'false')
      : featuresLayer(data.kind ? data : { features: [{ geometry: data, label: null }] });
  layer.addTo(map);
  fit(map, data.extent);
  element.classList.add('map-ready');
}

/** A map on which dragging draws the box of the form's ext_bbox inputs (minx, miny, maxx, maxy). */
function boxPicker(form) {
  const element = form.querySelector('[data-bbox-map]');
  const inputs = ['minx', 'miny', 'maxx', 'maxy'].map((k) => form.querySelector(`[name="${k}"]`));
  if (!element || inputs.some((i) => !i)) return;
  element.hidden = false;
  const map = baseMap(element, element.dataset.tiles, element.dataset.attribution);
  map.setView([20, 0], 1);
  map.dragging.disable();
  map.boxZoom.disable();
  let box = null;
  const show = (b) => {
    if (box) box.remove();
    box = L.rectangle(b, { color: '#b3541e', weight: 2, fillOpacity: 0.15 }).addTo(map);
  };
  const values = inputs.map((i) => Number.parseFloat(i.value));
  if (values.every(Number.isFinite)) {
    show([
      [values[1], values[0]],
      [values[3], values[2]],
    ]);
    map.fitBounds(box.getBounds(), { maxZoom: 8 });
  }
  let start = null;
  const clamp = (v, m) => Math.max(-m, Math.min(m, v));
  map.on('mousedown', (e) => {
    start = e.latlng;
  });
  map.on('mousemove', (e) => {
    if (start) show([start, e.latlng]);
  });
  map.on('mouseup', (e) => {
    if (!start) return;
    const [a, b] = [start, e.latlng];
    start = null;
    if (a.equals(b)) return;
    const round = (v) => Math.round(v * 1000) / 1000;
    const [w, s, east, n] = [Math.min(a.lng, b.lng), Math.min(a.lat, b.lat), Math.max(a.lng, b.lng), Math.max(a.lat, b.lat)];
    [clamp(w, 540), clamp(s, 90), clamp(east, 540), clamp(n, 90)].forEach((v, i) => {
      inputs[i].value = String(round(v));
    });
  });
}

document.addEventListener('DOMContentLoaded', () => {
  if (typeof L === 'undefined') return;
  for (const element of document.querySelectorAll('[data-map-source]')) showMap(element);
  for (const form of document.querySelectorAll('[data-bbox-form]')) boxPicker(form);
});
