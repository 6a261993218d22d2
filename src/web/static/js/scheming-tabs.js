// The languages of a fluent field as ARIA tabs (the page without scripts shows every language's
// panel, with a list of links to them): one panel shown at a time, arrow keys, Home and End move
// between the tabs. A field whose script tag comes more than once is set up once.
(() => {
  const setUp = (list) => {
    if (list.dataset.tabsReady) return;
    list.dataset.tabsReady = 'true';
    const links = [...list.querySelectorAll('a[href^="#"]')];
    const panels = links.map((a) => document.getElementById(a.getAttribute('href').slice(1)));
    if (!links.length || panels.some((p) => !p)) return;
    list.setAttribute('role', 'tablist');
    for (const li of list.children) li.setAttribute('role', 'presentation');
    const select = (index, focus) => {
      links.forEach((a, i) => {
        const on = i === index;
        a.setAttribute('aria-selected', String(on));
        a.tabIndex = on ? 0 : -1;
        panels[i].hidden = !on;
      });
      if (focus) links[index].focus();
    };
    links.forEach((a, i) => {
      a.setAttribute('role', 'tab');
      a.setAttribute('aria-controls', panels[i].id);
      panels[i].setAttribute('role', 'tabpanel');
      a.addEventListener('click', (e) => {
        e.preventDefault();
        select(i, true);
      });
      a.addEventListener('keydown', (e) => {
        const last = links.length - 1;
        const next = { ArrowRight: i === last ? 0 : i + 1, ArrowLeft: i === 0 ? last : i - 1, Home: 0, End: last }[e.key];
        if (next === undefined) return;
        e.preventDefault();
        select(next, true);
      });
    });
    const first = links.findIndex((a) => a.hasAttribute('data-selected'));
    select(Math.max(first, 0), false);
    // The browser's own check of a required input in a hidden panel shows that panel.
    panels.forEach((panel, i) => {
      panel.addEventListener('invalid', () => select(i, false), true);
    });
  };
  const run = () => {
    for (const list of document.querySelectorAll('[data-lang-tabs]')) setUp(list);
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run);
  else run();
})();
