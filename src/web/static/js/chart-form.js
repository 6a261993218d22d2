// The chart view's edit form: the preview is drawn again (by the server) when an option changes.
// Without this script the form's "Preview" button does the same with a page load.
(() => {
  const form = document.querySelector('form[data-chart-preview]');
  const target = document.getElementById('chart-preview');
  if (!form || !target) return;
  const names = ['x', 'y', 'group_by', 'aggregate', 'chart'];
  let latest = 0;
  const redraw = async () => {
    const query = new URLSearchParams();
    const data = new FormData(form);
    for (const name of names) for (const value of data.getAll(name)) query.append(name, String(value));
    const asked = ++latest;
    target.setAttribute('aria-busy', 'true');
    try {
      const res = await fetch(`${form.dataset.chartPreview}?${query}`, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
      // An answer to an older change that came late is not shown.
      if (asked === latest) target.innerHTML = await res.text();
    } finally {
      if (asked === latest) target.setAttribute('aria-busy', 'false');
    }
  };
  form.addEventListener('change', (event) => {
    if (names.includes(event.target.name)) redraw();
  });
})();
