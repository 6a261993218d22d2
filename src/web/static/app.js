// Progressive enhancement only: every page works without this file.
document.addEventListener('DOMContentLoaded', () => {
  // Buttons that delete or purge ask first.
  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
    });
  }
  // Facet and sort selects submit their form at once.
  for (const select of document.querySelectorAll('select[data-autosubmit]')) {
    select.addEventListener('change', () => select.form && select.form.submit());
    const button = select.form && select.form.querySelector('.autosubmit-fallback');
    if (button) button.hidden = true;
  }
  // Copy buttons (API tokens shown once).
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.hidden = false;
    button.addEventListener('click', () => {
      const target = document.getElementById(button.getAttribute('data-copy'));
      if (target && navigator.clipboard) navigator.clipboard.writeText(target.textContent.trim());
    });
  }
});
