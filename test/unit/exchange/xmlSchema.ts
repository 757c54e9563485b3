/**
 * Schema validation for the exchange tests: xmllint (Debian package libxml2-utils, installed by .ci/run) against
 * the official REFI-QDA Project.xsd in the shared corpus, and a Codebook.xsd rebuilt from the REFI-QDA 1.5 PDF.
 * Not a test file itself (no `.test.ts`).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CORPUS } from '../../helpers/serverProcess';

/** The official Project.xsd (QDA-XML 1.0, MIT), read from the shared corpus where it lives. */
export const PROJECT_XSD = path.join(CORPUS, 'refi-qda', 'schemas', 'Project.xsd');

/**
 * Skips the calling test (printing why) when xmllint is not installed; under CI=true fails instead, since
 * .ci/run installs it.
 */
export function requireXmllint(ctx: Mocha.Context): void {
  const r = spawnSync('xmllint', ['--version'], { encoding: 'utf8' });
  if (!r.error) return;
  const why = 'xmllint is not installed (Debian: apt-get install libxml2-utils)';
  if (process.env.CI === 'true') throw new Error(`${why}; required under CI=true`);
  console.log(`      skipped: ${why}`);
  ctx.skip();
}

/** Validates the XML text `xml` against the schema file `xsd` with `xmllint --noout --schema`; returns its verdict and output. */
export function xmllintValidate(xml: string, xsd: string): { ok: boolean; output: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-xsd-'));
  try {
    const file = path.join(dir, 'doc.xml');
    fs.writeFileSync(file, xml);
    const r = spawnSync('xmllint', ['--noout', '--schema', xsd, file], { encoding: 'utf8' });
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Codebook.xsd (`urn:QDA-XML:codebook:1.0`), typed from section 5.2 of the REFI-QDA 1.5 standard (REFI,
 * www.qdasoftware.org, MIT licence; the PDF is in ../shared/corpus/refi-qda/schemas/), with ASCII hyphens: the
 * corpus notes found no faithful copy of it anywhere.
 */
export const CODEBOOK_XSD = `<?xml version="1.0" encoding="UTF-8"?>
<xsd:schema xmlns="urn:QDA-XML:codebook:1.0" xmlns:xsd="http://www.w3.org/2001/XMLSchema"
  targetNamespace="urn:QDA-XML:codebook:1.0" elementFormDefault="qualified" attributeFormDefault="unqualified" version="1.0">
  <xsd:element name="CodeBook" type="CodeBookType"/>
  <xsd:complexType name="CodeBookType">
    <xsd:sequence>
      <xsd:element name="Codes" type="CodesType"/>
      <xsd:element name="Sets" type="SetsType" minOccurs="0"/>
    </xsd:sequence>
    <xsd:attribute name="origin" type="xsd:string"/>
  </xsd:complexType>
  <xsd:complexType name="CodesType">
    <xsd:sequence>
      <xsd:element name="Code" type="CodeType" maxOccurs="unbounded"/>
    </xsd:sequence>
  </xsd:complexType>
  <xsd:complexType name="SetsType">
    <xsd:sequence>
      <xsd:element name="Set" type="SetType" maxOccurs="unbounded"/>
    </xsd:sequence>
  </xsd:complexType>
  <xsd:complexType name="CodeType">
    <xsd:sequence>
      <xsd:element name="Description" type="xsd:string" minOccurs="0"/>
      <xsd:element name="Code" type="CodeType" minOccurs="0" maxOccurs="unbounded"/>
    </xsd:sequence>
    <xsd:attribute name="guid" type="GUIDType" use="required"/>
    <xsd:attribute name="name" type="xsd:string" use="required"/>
    <xsd:attribute name="isCodable" type="xsd:boolean" use="required"/>
    <xsd:attribute name="color" type="RGBType"/>
  </xsd:complexType>
  <xsd:complexType name="SetType">
    <xsd:sequence>
      <xsd:element name="Description" type="xsd:string" minOccurs="0"/>
      <xsd:element name="MemberCode" type="MemberCodeType" minOccurs="0" maxOccurs="unbounded"/>
    </xsd:sequence>
    <xsd:attribute name="guid" type="GUIDType" use="required"/>
    <xsd:attribute name="name" type="xsd:string" use="required"/>
  </xsd:complexType>
  <xsd:complexType name="MemberCodeType">
    <xsd:attribute name="guid" type="GUIDType" use="required"/>
  </xsd:complexType>
  <xsd:simpleType name="GUIDType">
    <xsd:restriction base="xsd:token">
      <xsd:pattern value="([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})|(\\{[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\\})"/>
    </xsd:restriction>
  </xsd:simpleType>
  <xsd:simpleType name="RGBType">
    <xsd:restriction base="xsd:token">
      <xsd:pattern value="#([A-Fa-f0-9]{6}|[A-Fa-f0-9]{3})"/>
    </xsd:restriction>
  </xsd:simpleType>
</xsd:schema>
`;

/** Writes {@link CODEBOOK_XSD} to a temporary file and returns its path (removed with `dir`). */
export function writeCodebookXsd(dir: string): string {
  const file = path.join(dir, 'Codebook.xsd');
  fs.writeFileSync(file, CODEBOOK_XSD);
  return file;
}
