import busboy from "busboy";
import type { NextFunction, Request, Response } from "express";
import { renderMessagePage } from "./ui/render.js";

/**
 * multipart/form-data for the forms that upload a file (the draft mapping, the platform's Security
 * Event report). Fields become `req.body` (so the CSRF check reads `_csrf` as for any form); an
 * uploaded file's text becomes the `field` field (`draft` by default) when it is not empty, and its
 * name `fileName`. Bounded: one file, at most `maxBytes`, a few fields; more parts than that answer
 * 413. Answered once, whatever the parser reports after its first error.
 */
export function draftUpload(maxBytes: number, field = "draft") {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!req.is("multipart/form-data")) return next();
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { files: 1, fileSize: maxBytes, fields: 10, fieldSize: maxBytes, parts: 12 },
      });
    } catch {
      return renderMessagePage(res, 400, "Bad request", "The upload could not be read.");
    }
    const fields: Record<string, string> = {};
    const chunks: Buffer[] = [];
    let fileName = "";
    let tooLarge = false;
    // busboy reports a broken part once per part, and closes after an error too: the first outcome
    // answers, and the rest of the body is read and dropped.
    let settled = false;
    const settle = (answer: () => void) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.resume();
      answer();
    };
    const tooMany = () =>
      settle(() => renderMessagePage(res, 413, "Too large", "The upload has more parts than the form has fields."));
    parser.on("field", (name, value) => {
      fields[name] = value;
    });
    const unreadable = () => settle(() => renderMessagePage(res, 400, "Bad request", "The upload could not be read."));
    parser.on("file", (_name, stream, info) => {
      fileName = info.filename ?? "";
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("limit", () => (tooLarge = true));
      stream.on("error", unreadable); // a file cut short fails on its own stream, not only on the parser
    });
    parser.on("partsLimit", tooMany);
    parser.on("filesLimit", tooMany);
    parser.on("fieldsLimit", tooMany);
    parser.on("error", unreadable);
    parser.on("close", () =>
      settle(() => {
        if (tooLarge)
          return renderMessagePage(
            res,
            413,
            "Too large",
            `The uploaded file is larger than ${maxBytes >= 1_048_576 ? `${Math.round(maxBytes / 1_048_576)} MB` : `${Math.round(maxBytes / 1024)} KB`}.`,
          );
        const file = Buffer.concat(chunks).toString("utf8");
        req.body = { ...fields, ...(file.trim() ? { [field]: file, fileName } : {}) };
        next();
      }),
    );
    req.pipe(parser);
  };
}
