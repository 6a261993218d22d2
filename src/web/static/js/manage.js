// Management forms: the URL name follows the title until the user edits it (the server validates it).
document.addEventListener('DOMContentLoaded', () => {
  for (const form of document.querySelectorAll('form[data-slug-form]')) {
    const title = form.querySelector('input[name="title"]');
    const name = form.querySelector('input[name="name"]');
    if (!title || !name) continue;
    const slug = (text) =>
      text
        .normalize('NFKD')
        .replace(/[\u0300-\u036f]/g, '')
        .toLowerCase()
        .replace(/[^a-z0-9_-]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(0, 100);
    // A name already given (editing, or kept after an error) is the user's own.
    let followsTitle = !name.value || name.value === slug(title.value);
    name.addEventListener('input', () => {
      followsTitle = name.value === '' || name.value === slug(title.value);
    });
    title.addEventListener('input', () => {
      if (followsTitle) name.value = slug(title.value);
    });
  }
});
