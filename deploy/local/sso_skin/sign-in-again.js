/* The demo provider's pages (LemonLDAP::NG 2.16, deploy/local/sso.sh): a refused second factor
   ends on the provider's error page, whose one button ("Go to portal") leads to the provider's
   own menu, not back to the application that sent the user: 2.16 gives that page no trace of
   the sign-in request. The request is on the password page, though (its hidden `url`, the
   OIDC authorize address, base64 as LemonLDAP::NG keeps it): kept here for this tab, it makes
   the error page's button "Try again", to the password form of the same sign-in, which then
   returns to the hub. Loaded by the skin's customhead.tpl; a file, not inline, for the
   provider's Content-Security-Policy. */
(function () {
  "use strict";
  var KEY = "gpportal-sign-in-request";
  function keep() {
    var field = document.querySelector("form input[type=hidden][name=url]");
    if (field && field.value) {
      sessionStorage.setItem(KEY, field.value);
    }
  }
  function offerAgain() {
    var request = sessionStorage.getItem(KEY);
    if (!request) { return; }
    document.querySelectorAll("a.btn[href*='cancel=1']").forEach(function (link) {
      if (link.href.indexOf("url=") !== -1) { return; }
      var target = new URL(link.href);
      target.search = "?url=" + encodeURIComponent(request);
      link.href = target.toString();
      link.id = "gp-sign-in-again";
      var words = link.querySelector("[trspan]");
      if (words) {
        words.removeAttribute("trspan"); // the portal's translation would put its words back
        words.textContent = "Try again";
      }
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    keep();
    offerAgain();
  });
})();
