import DefaultTheme from 'vitepress/theme';
import './custom.css';

/** VitePress' default theme, with tables that fit the page (custom.css). */
export default DefaultTheme;
