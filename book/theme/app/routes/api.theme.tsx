export { setThemeAPI as action } from '@myst-theme/site';
