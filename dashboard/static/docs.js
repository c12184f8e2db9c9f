/* Swagger UI 5 for /docs (vendored in static/swagger/: it renders the OpenAPI 3.1 the server
 * emits), started from this file: the docs page has no inline script (its
 * Content-Security-Policy allows none). The OpenAPI address is the page's data attribute. */

(function () {
  const box = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: box.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    presets: [SwaggerUIBundle.presets.apis],
  });
})();
