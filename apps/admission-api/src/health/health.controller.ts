import { Controller, Get, Header } from '@nestjs/common';

@Controller()
export class HealthController {
  /** Alive: the process answers. Readiness (database, queue) is /readyz, in a later issue. */
  @Get('healthz')
  @Header('Content-Type', 'text/plain; charset=utf-8')
  healthz(): string {
    return 'ok';
  }
}
