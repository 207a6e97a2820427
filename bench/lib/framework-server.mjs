/**
 * The floor's answer (bench/lib/floor-server.mjs: parse the AdmissionReview, answer "allowed"
 * with its uid) served by a framework instead of bare Node `http`, to measure what each costs
 * per request on this machine (`@nestjs/platform-fastify` beside Express):
 *
 *   express        Express 5, express.json() and res.json(), its defaults (ETag on)
 *   nest-express   a Nest controller (@Post, @Body, @HttpCode) on @nestjs/platform-express
 *   nest-fastify   the same controller on @nestjs/platform-fastify
 *   fastify        Fastify 5 alone, its own JSON parser and reply.send()
 *   setprototypeof the floor, but each request's and response's prototype swapped as Express does
 *
 * No auth, no database: only the framework differs from the floor. Started by bench/frameworks.ts
 * with the variant and the port as arguments; prints "listening" when ready.
 */
import 'reflect-metadata';
import { Buffer } from 'node:buffer';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import process from 'node:process';
import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import express from 'express';
import fastify from 'fastify';

const PATH = '/v1/admission/validate';
const LIMIT = 3 * 1024 * 1024;
const answer = (review) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: review?.request?.uid ?? '', allowed: true },
});

/** Nest's decorators applied by hand (this file is plain JavaScript): what `@Controller` … `@Body()` would declare. */
function nestModule() {
  class Webhook {
    validate(review) {
      return answer(review);
    }
  }
  Controller('v1/admission')(Webhook);
  const descriptor = Object.getOwnPropertyDescriptor(Webhook.prototype, 'validate');
  Post('validate')(Webhook.prototype, 'validate', descriptor);
  HttpCode(200)(Webhook.prototype, 'validate', descriptor);
  Body()(Webhook.prototype, 'validate', 0);
  class WebhookModule {}
  Module({ controllers: [Webhook] })(WebhookModule);
  return WebhookModule;
}

async function nest(adapter) {
  const app = await NestFactory.create(nestModule(), adapter, { logger: false, rawBody: false, bodyParser: true });
  if (adapter instanceof ExpressAdapter) app.useBodyParser('json', { limit: LIMIT });
  return app;
}

async function listen(variant, port) {
  switch (variant) {
    case 'express': {
      const app = express();
      app.disable('x-powered-by');
      app.post(PATH, express.json({ limit: LIMIT }), (request, response) => void response.json(answer(request.body)));
      const server = app.listen(port, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      return { server, close: () => new Promise((resolve) => server.close(resolve)) };
    }
    case 'setprototypeof': {
      // The floor plus the one thing Express does to every request before any route: swap the
      // prototypes of the request and the response for its own (app.handle in express/lib/application.js).
      const reqProto = Object.create(IncomingMessage.prototype);
      const resProto = Object.create(ServerResponse.prototype);
      const server = createServer((request, response) => {
        Object.setPrototypeOf(request, reqProto);
        Object.setPrototypeOf(response, resProto);
        const chunks = [];
        request.on('data', (chunk) => chunks.push(chunk));
        request.on('end', () => {
          const body = JSON.stringify(answer(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
          response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
          response.end(body);
        });
      });
      server.listen(port, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      return { server, close: () => new Promise((resolve) => server.close(resolve)) };
    }
    case 'fastify': {
      const app = fastify({ bodyLimit: LIMIT, keepAliveTimeout: 60_000 });
      app.post(PATH, async (request) => answer(request.body));
      await app.listen({ port, host: '127.0.0.1' });
      return { server: app.server, close: () => app.close() };
    }
    case 'nest-express':
    case 'nest-fastify': {
      const app = await nest(variant === 'nest-express' ? new ExpressAdapter() : new FastifyAdapter({ bodyLimit: LIMIT }));
      await app.listen(port, '127.0.0.1');
      return { server: app.getHttpServer(), close: () => app.close() };
    }
    default:
      throw new Error(`unknown variant ${variant}: express, nest-express, nest-fastify, fastify or setprototypeof`);
  }
}

const running = await listen(process.argv[2], Number(process.argv[3]));
running.server.keepAliveTimeout = 60_000;
process.stdout.write('listening\n');
process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
