// CSS imported for its side effect: esbuild bundles it into static/widget.css.
declare module "*.css";
