/** The API's name for the configuration module every app imports (libs/ops). */
export { APP_CONFIG, ConfigModule as AppConfigModule } from '@quota/ops';
