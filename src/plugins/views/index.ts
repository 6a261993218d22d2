// View plugins: each adds one resource view type (as CKAN's image_view, text_view, webpage_view,
// datatables_view, video_view and audio_view do), and svc's chart and map views of data store tables. Which
// are created by default, and for which resources, is svc.views.default_views and each type's canView.
import type { Plugin } from '../plugin.ts';
import { p } from '../../validation/params.ts';
import { registerViewType, type ViewType } from '../../actions/resource-view.ts';
import { ConfigError } from '../../config/load.ts';
import { chartActions, chartViewType } from './chart.ts';
import { mapActions, mapViewType } from './map.ts';

const fmt = (r: { format: string | null }) => (r.format ?? '').toLowerCase();
const urlSuffix = (r: { url: string }) => (r.url.split(/[?#]/)[0].split('.').pop() ?? '').toLowerCase();

const IMAGE_FORMATS = ['png', 'jpeg', 'jpg', 'gif'];
const TEXT_FORMATS = ['text/plain', 'txt', 'plain', 'xml', 'rdf', 'rdf+xml', 'owl+xml', 'atom', 'rss', 'json', 'jsonp'];
const VIDEO_FORMATS = ['mp4', 'ogg', 'webm'];
const AUDIO_FORMATS = ['wav', 'ogg', 'mp3'];

export const VIEW_TYPES: ViewType[] = [
  {
    name: 'image_view',
    defaultTitle: 'Image',
    options: { image_url: p.string('URL of the image (default: the resource URL)').ignoreEmpty() },
    canView: (r) => IMAGE_FORMATS.includes(fmt(r)),
  },
  {
    name: 'text_view',
    defaultTitle: 'Text',
    options: {},
    canView: (r) => TEXT_FORMATS.includes(fmt(r)),
  },
  {
    name: 'webpage_view',
    defaultTitle: 'Website',
    options: { page_url: p.string('URL of the page (default: the resource URL)').ignoreEmpty() },
    canView: (r) => ['html', 'htm'].includes(fmt(r)) || ['html', 'htm'].includes(urlSuffix(r)),
  },
  {
    name: 'datatables_view',
    defaultTitle: 'Table',
    requiresDatastore: true,
    options: {
      responsive: p.boolean('responsive table layout').default(false),
      ellipsis_length: p.natural('longest text shown in a cell before it is cut').default(100),
      date_format: p.string('how dates are shown (moment.js format)').default('llll'),
      show_fields: p.stringList('the columns shown (default all)'),
      filterable: p.boolean('the table can be filtered').default(true),
    },
    canView: (r) => r.datastore_active || r.url_type === 'datastore',
  },
  {
    name: 'video_view',
    defaultTitle: 'Video',
    options: {
      video_url: p.string('URL of the video (default: the resource URL)').ignoreEmpty(),
      poster_url: p.string('URL of an image shown before the video plays').ignoreEmpty(),
    },
    canView: (r) => VIDEO_FORMATS.includes(fmt(r)),
  },
  {
    name: 'audio_view',
    defaultTitle: 'Audio',
    options: { audio_url: p.string('URL of the audio file (default: the resource URL)').ignoreEmpty() },
    canView: (r) => AUDIO_FORMATS.includes(fmt(r)),
  },
  chartViewType,
  mapViewType,
];

/** Actions a view type brings. */
const VIEW_ACTIONS: Record<string, typeof chartActions> = { chart: chartActions, map: mapActions };

function viewPlugin(type: ViewType): Plugin {
  return {
    name: type.name,
    setup(services) {
      if (type.requiresDatastore && !services.config.list('svc.plugins').includes('datastore')) {
        throw new ConfigError(`the ${type.name} plugin needs the datastore plugin (add datastore to svc.plugins)`);
      }
      registerViewType(services, type);
      if (VIEW_ACTIONS[type.name]) services.registry.defineAll(VIEW_ACTIONS[type.name]);
    },
  };
}

export const viewPlugins: Record<string, Plugin> = Object.fromEntries(VIEW_TYPES.map((t) => [t.name, viewPlugin(t)]));
