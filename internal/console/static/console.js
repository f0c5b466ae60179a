// hookinbox console: keeps each [data-refresh] part of a page up to date
// while the page is open, by reading the page again and putting that
// part in place; a change's page refreshes this way until it is done.
(function () {
  'use strict';

  function schedule(el) {
    var seconds = parseInt(el.getAttribute('data-refresh'), 10);
    if (seconds > 0) {
      window.setTimeout(function () { refresh(el); }, seconds * 1000);
    }
  }

  function refresh(el) {
    if (document.hidden || el.contains(document.activeElement) && document.activeElement !== document.body) {
      schedule(el); // hidden, or being used: later
      return;
    }
    window.fetch(window.location.href, { credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) {
        if (!r.ok) { throw new Error('HTTP ' + r.status); }
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, 'text/html');
        var fresh = doc.getElementById(el.id);
        if (!fresh) { return; }
        fresh = document.adoptNode(fresh);
        el.replaceWith(fresh);
        document.title = doc.title;
        schedule(fresh);
      })
      .catch(function () {
        schedule(el); // the console stopped, or a blip: try again later
      });
  }

  document.querySelectorAll('[data-refresh][id]').forEach(schedule);

  // On a phone the filters start folded, so the list comes first.
  if (window.matchMedia('(max-width: 640px)').matches) {
    document.querySelectorAll('details[data-narrow-closed]').forEach(function (d) { d.open = false; });
  }
}());
